"""The Explorer's API through gradio_client on the served app: a page of questions with filters and paging, and one
question, on runs the tiny models finished."""
from __future__ import annotations

from tests.explorer_runs import publish_run


def test_explorer_items_lists_filters_and_pages(store, settings, finished_runs, client):
    key = publish_run(store, settings, finished_runs["text"])
    everything = client.predict(key, "simpleqa", api_name="/explorer_items")
    assert everything["summary"]["total"] == 31 and everything["pages"] == 2 and len(everything["items"]) == 25
    assert set(everything["items"][0]) >= {"item", "question", "answer", "gold", "score", "outcome", "grade", "topic"}
    assert "correct" in everything["outcomes"] and any(g.startswith("topic = ") for g in everything["group_filters"])
    results = store.read_json(f"results/{key}.json")  # the summary carries the run's coverage
    assert everything["summary"]["coverage"] == results["benchmarks"]["simpleqa"]["coverage"]["share"] > 0

    second = client.predict(key, "simpleqa", "", "", [], "", "", False, 2, api_name="/explorer_items")
    assert second["page"] == 2 and len(second["items"]) == 6
    assert {i["item"] for i in second["items"]}.isdisjoint(i["item"] for i in everything["items"])

    topic = everything["group_filters"][0]
    correct = client.predict(key, "simpleqa", "", "correct", [topic], "", "item", True, 1,
                             api_name="/explorer_items")
    value = topic.split(" = ", 1)[1]
    assert correct["items"] and all(i["outcome"] == "correct" and i["topic"] == value for i in correct["items"])
    ids = [i["item"] for i in correct["items"]]
    assert ids == sorted(ids, reverse=True)
    assert correct["summary"]["accuracy"] == 1.0
    assert "outcome=correct" in correct["query"] and "desc=1" in correct["query"]

    missing = client.predict("nobody/nothing/0123456789ab_auto", "simpleqa", api_name="/explorer_items")
    assert "no run with key 'nobody/nothing/0123456789ab_auto' on the board" in missing["error"]
    assert "no run given" in client.predict("", "simpleqa", api_name="/explorer_items")["error"]
    unknown = client.predict(key, "simpleqa", "", "bogus", api_name="/explorer_items")["error"]
    assert "unknown outcome 'bogus'" in unknown and "correct" in unknown and "scored per dataset" not in unknown
    assert client.predict(key, "simpleqa", "", "image unavailable", api_name="/explorer_items")["items"] == []
    assert "has no CURE details" in client.predict(key, "cure", api_name="/explorer_items")["error"]
    assert "unknown benchmark" in client.predict(key, "nope", api_name="/explorer_items")["error"]


def test_explorer_item_reads_one_question_and_compares(store, settings, finished_runs, client):
    key_a = publish_run(store, settings, finished_runs["vision-a"])
    key_b = publish_run(store, settings, finished_runs["vision-b"])
    one = client.predict(key_a, "cure", "cure-0003", api_name="/explorer_item")
    assert one["item"] == "cure-0003" and one["row"]["chain_length"] == "3"
    titles = [p["title"] for p in one["parts"]]
    assert titles == ["This instance", "Step 1", "Step 2", "Step 3", "High-level inference"]
    assert one["parts_b"] is None and one["image"].endswith(".png") and one["has_picture"] is True
    import httpx  # the image URL is absolute and the client can fetch it
    assert one["image_url"].startswith("http://127.0.0.1:")
    fetched = httpx.get(one["image_url"], timeout=30)
    assert fetched.status_code == 200 and fetched.content[:4] == b"\x89PNG"

    both = client.predict(key_a, "lave", "lave-05", key_b, api_name="/explorer_item")
    rating_a = dict(both["parts"][0]["facts"])["rating"]
    rating_b = dict(both["parts_b"][0]["facts"])["rating"]
    assert rating_b == "3 (correct)" and rating_a.split()[0] in ("1", "2", "3")

    listed = client.predict(key_a, "lave", key_b, api_name="/explorer_items")  # run B: the paired difference
    paired = listed["paired"]
    assert paired["text"].startswith("A - B = ") and f"on {paired['shared']} shared items" in paired["text"]
    assert paired["shared"] > 0 and paired["a_only_right"] == 0  # B's judge rated every answer right
    assert paired["low"] <= paired["difference"] <= paired["high"] and paired["method"].startswith("clt")
    assert client.predict(key_a, "lave", api_name="/explorer_items")["paired"] is None

    assert "no question" in client.predict(key_a, "cure", "cure-9999", api_name="/explorer_item")["error"]


def test_explorer_items_takes_a_board_metric(store, settings, finished_runs, client):
    key = publish_run(store, settings, finished_runs["vision-a"])
    scores = store.read_json(f"results/{key}.json")["benchmarks"]["reform"]["scores"]
    page = client.predict(key, "reform", "", "", [], "", "", False, 1, "gen_overall", api_name="/explorer_items")
    assert page["summary"]["metric_value"] == scores["gen_overall"] and "metric=gen_overall" in page["query"]
    assert {i["mode"] for i in page["items"]} == {"generation"}
    bad = client.predict(key, "reform", "", "", [], "", "", False, 1, "nope", api_name="/explorer_items")["error"]
    assert "unknown metric 'nope'" in bad and "gen_overall" in bad
    one = client.predict(key, "reform", page["items"][0]["item"], api_name="/explorer_item")
    assert one["has_picture"] is True and one["image_url"].startswith("http")
