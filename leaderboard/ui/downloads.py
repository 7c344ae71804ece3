"""A run's details file served by the run's key, on the local store:
GET /details/<org>/<model>/<sha12>_<precision>/<benchmark>.parquet.

The board's Details links point here, so that no link names where the store lives on the server (on the Hub store
they point to the file in the results dataset instead). Only a well-formed run key and a registered benchmark are
looked up, through the store (which keeps every path inside it); anything else is a 404.
"""
from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from evaluator import api
from leaderboard.explorer.details_cache import details_path
from leaderboard.store import Store
from leaderboard.submissions.records import is_request_key

DETAILS_ROUTE = "/details/{org}/{model}/{run}/{benchmark}.parquet"  # what details_cache.details_link addresses
PARQUET = "application/vnd.apache.parquet"
NOT_FOUND = "No such details file: the address names a run's key and a benchmark, " \
            "/details/<org>/<model>/<sha12>_<precision>/<benchmark>.parquet."


def details_routes(store: Store) -> list[Route]:
    """The route serving details files by run key (for launch()'s app_kwargs)."""

    async def serve(request: Request) -> Response:
        params = request.path_params
        key, benchmark = f"{params['org']}/{params['model']}/{params['run']}", params["benchmark"]
        if not is_request_key(key) or benchmark not in api.benchmark_names():
            return PlainTextResponse(NOT_FOUND, status_code=404)
        data = await run_in_threadpool(store.read_bytes, details_path(key, benchmark))
        if data is None:
            return PlainTextResponse(NOT_FOUND, status_code=404)
        filename = f"{key.replace('/', '__')}__{benchmark}.parquet"
        return Response(data, media_type=PARQUET, headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    return [Route(DETAILS_ROUTE, serve, methods=["GET"], name="run_details")]
