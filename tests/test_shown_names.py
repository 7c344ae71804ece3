"""Issue 52, point 12: no filesystem path reaches a visitor. A local judge named by its folder showed that folder's
path in the board's Judge column; a served model named by its folder (as `transformers serve` asks) put the path into
its request key, the Explorer URL and the Queue. Each shows the folder's last part; what is called keeps the path."""
from __future__ import annotations

from evaluator import api
from leaderboard.board.columns import schema
from leaderboard.board.frames import leaderboard_frame
from leaderboard.board.views import view_text
from leaderboard.submissions.served import served_request
from tests.results_files import board_result

FOLDER = "/home/someone/models/tiny-llava"


def test_a_local_judge_is_shown_by_its_folders_last_part():
    identity = {"kind": "local", "model": "/home/someone/judges/qwen-judge", "revision": None}
    assert api.judge_name(identity) == "qwen-judge @ unpinned revision (local)"
    assert api.judge_name({"kind": "local", "model": "Qwen/Qwen2.5-7B-Instruct", "revision": "abc"}) == \
        "Qwen/Qwen2.5-7B-Instruct @ abc (local)"  # a Hub id as is
    board = schema()
    row = board_result("org/m", {"simpleqa": 0.5})
    row["run"].update(judge=identity, judge_name=None)  # the board names the judge from its identity
    [shown] = view_text(leaderboard_frame([row], board), board, "runs").to_dict("records")
    assert shown["Judge"] == "qwen-judge @ unpinned revision (local)" and "/home" not in str(shown)


def test_a_served_model_named_by_its_folder_keeps_the_path_out_of_its_key_and_label():
    request = served_request("http://127.0.0.1:8000/v1", FOLDER)
    assert request.model == "served--127.0.0.1-8000/tiny-llava", request.model
    assert "home" not in request.key and "someone" not in request.key
    assert request.label == "tiny-llava (served: 127.0.0.1:8000)"
    assert request.endpoint["model"] == FOLDER  # what the endpoint is asked for stays the name it serves
    other = served_request("http://127.0.0.1:8000/v1", "/elsewhere/tiny-llava")
    assert other.key != request.key  # the same last part, another folder: another run


def test_shown_name_keeps_hub_ids_and_names():
    for name in ("org/model", "gpt-4o", "meta-llama/Llama-3.3-70B-Instruct"):
        assert api.shown_name(name) == name
    for path, shown in (("/tmp/a/b", "b"), ("~/m/", "m"), ("./judge", "judge"), ("C:\\models\\j", "j")):
        assert api.shown_name(path) == shown
