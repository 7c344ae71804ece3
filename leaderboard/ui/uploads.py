"""The Space takes no file uploads, so Gradio's upload routes are closed.

No component takes a file from a visitor: the board's and the Explorer's tables, the Explorer's picture and download
button, the playground's picture and the sign-in button only show or hand out what the server made, and Gradio sends
those as files it already holds, never through the upload route. Gradio's `max_file_size` limits each file, not a
request, so an open route would store as many files as one request carries. `NoUploads`, an ASGI middleware that
`launch_options` gives launch() (app_kwargs), answers 403 with a one-sentence reason to every request for an upload
route (/gradio_api/upload, /gradio_api/upload_progress, /gradio_api/process_recording) and to every request with a
multipart body (/gradio_api/component_server would read its files), before a byte of the body is read: nothing is
stored, whatever the request's size or number of files.
"""
from __future__ import annotations

from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

UPLOAD_ROUTES = ("/gradio_api/upload", "/gradio_api/upload_progress", "/gradio_api/process_recording")
NO_UPLOADS = "This Space takes no file uploads: no part of it accepts files, so the upload route is closed.\n"


def is_upload(scope: Scope) -> bool:
    """Whether an HTTP request asks for an upload route (at the end of its path, whatever comes before: a mount
    prefix, trailing slashes) or carries a multipart body."""
    path = scope.get("path", "").rstrip("/")
    if path.endswith(UPLOAD_ROUTES):
        return True
    return any(name.lower() == b"content-type" and value.strip().lower().startswith(b"multipart/")
               for name, value in scope.get("headers") or ())


class NoUploads:
    """ASGI middleware: upload requests get 403 and the reason, unread (the connection is then closed); the rest
    pass through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_upload(scope):
            refusal = PlainTextResponse(NO_UPLOADS, status_code=403, headers={"Connection": "close"})
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def no_uploads() -> list[Middleware]:
    """The middleware list for launch(app_kwargs={"middleware": ...})."""
    return [Middleware(NoUploads)]
