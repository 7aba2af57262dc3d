"""What the dashboard's form handlers share: the service, a url-encoded form, one field.

Forms arrive url-encoded and are parsed with the standard library (no multipart dependency).
"""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import Request

from gpuherd.service import Service

Form = dict[str, list[str]]


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def read_form(request: Request) -> Form:
    # At most limits.MAX_FORM_BYTES: CapsBody refuses a larger form before it is read whole.
    body = await request.body()
    return parse_qs(body.decode(errors="replace"), keep_blank_values=True)


def one(form: Form, name: str, default: str = "") -> str:
    """The field's last value (a checkbox's hidden default comes first), or `default`."""
    values = form.get(name)
    return values[-1] if values else default
