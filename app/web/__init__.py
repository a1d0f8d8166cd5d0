"""The single-page web client: static HTML/CSS/ES modules served by ``companion serve`` at ``/``.

It talks only to the public HTTP/SSE API, so ``static/js/api.js`` doubles as a worked example of
that API for frontend developers. ``route_handlers`` is what the composition root registers.
"""

from app.web.controller import route_handlers

__all__ = ["route_handlers"]
