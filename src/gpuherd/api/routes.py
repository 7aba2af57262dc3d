"""Route declarations kept until the app takes them, so that FastAPI analyses each route once.

FastAPI analyses a route (its parameters, a pydantic adapter for each) when an APIRouter's
decorator runs, and again for the copy `app.include_router` makes (FastAPI 0.165: lazily, at
the first request that goes through that router; older ones: as it includes it): twice per
route, the second time during the daemon's first answer. A RouteTable only records
`@routes.get(path, ...)`; `install` registers each route on the app with `app.add_api_route`
(prefix and dependencies as `include_router` took them), in the order declared, so the same
route wins as before. benchmarks/daemon_start.py measures the start-up this saves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from fastapi import APIRouter, FastAPI
from fastapi.params import Depends

Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])


class RouteTable:
    """The routes of one module, in the order declared, as APIRouter's decorators take them."""

    def __init__(self, *, include_in_schema: bool = True) -> None:
        self.include_in_schema = include_in_schema
        self.routes: list[tuple[str, str, Callable[..., Any], dict[str, Any]]] = []

    def get(self, path: str, **options: Any) -> Callable[[Endpoint], Endpoint]:
        return self._record(path, "GET", options)

    def post(self, path: str, **options: Any) -> Callable[[Endpoint], Endpoint]:
        return self._record(path, "POST", options)

    def delete(self, path: str, **options: Any) -> Callable[[Endpoint], Endpoint]:
        return self._record(path, "DELETE", options)

    def _record(
        self, path: str, method: str, options: dict[str, Any]
    ) -> Callable[[Endpoint], Endpoint]:
        def record(endpoint: Endpoint) -> Endpoint:
            self.routes.append((path, method, endpoint, options))
            return endpoint

        return record

    def install(
        self, app: FastAPI | APIRouter, prefix: str = "", dependencies: Sequence[Depends] = ()
    ) -> None:
        """Add the routes to `app` (or a router), as `app.include_router(prefix=,
        dependencies=)` would."""
        for path, method, endpoint, options in self.routes:
            app.add_api_route(
                prefix + path,
                endpoint,
                **{
                    **options,
                    "methods": [method],
                    "dependencies": [*dependencies, *options.get("dependencies", ())],
                    "include_in_schema": self.include_in_schema
                    and options.get("include_in_schema", True),
                },
            )
