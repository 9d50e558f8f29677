"""Provides the HTML judging packet's page: one self-contained file (script, style and texts inline) that works offline.

The page is rendered from `templates/packet.html` with the seat's stylesheet and `static/packet.js`
inline; its Content-Security-Policy (a meta element: the file is opened from disk) allows exactly
those two blocks by their SHA-256 and nothing else: no other script, no request to any host
(`connect-src`, `img-src`, `font-src` are 'none'). Texts are the packet's, masked at export and
rendered through `markup.markdown_html` (markdown-it-py, then nh3).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
from markupsafe import Markup

from centaur_tui.serve.markup import markdown_html

if TYPE_CHECKING:
    from centaur_tui.services.html_packet import HtmlPacket

HERE = Path(__file__).parent


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def render_packet(packet: HtmlPacket) -> str:
    """The HTML file of a packet: every place, its sanitised texts, the rubric, and the script that judges offline."""
    from centaur_tui.services.html_packet import packet_base64

    style = (HERE / "static" / "seat.css").read_text(encoding="utf-8")
    script = (HERE / "static" / "packet.js").read_text(encoding="utf-8")
    if "</" in script or "</" in style:
        raise ValueError("an inline block may not hold '</' (it would end its element early)")
    csp = (
        f"default-src 'none'; script-src {_hash(script)}; style-src {_hash(style)}; img-src 'none'; "
        "font-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
    )
    places = [
        {
            "task_title": p.task_title,
            "deliverable": p.deliverable,
            "prompt_html": Markup(markdown_html(p.task_prompt, 3)),
            "option_html": [Markup(markdown_html(p.option_1, 3)), Markup(markdown_html(p.option_2, 3))],
            "option_1": p.option_1,
            "option_2": p.option_2,
            "dimensions": p.dimensions,
        }
        for p in packet.places
    ]
    data = {
        "packetId": packet.packet_id,
        "packet": packet_base64(packet),
        "places": [{"token": p.token, "dimensions": [d.id for d in p.dimensions]} for p in packet.places],
        "allowTies": packet.allow_ties,
        "minRationale": packet.min_rationale,
        "idleSeconds": packet.idle_seconds,
    }
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True, undefined=jinja2.StrictUndefined
    )
    return environment.get_template("packet.html").render(
        csp=Markup(csp),  # our own text, no double quote: kept readable in the attribute
        style=Markup(style),
        script=Markup(script),
        session_name=packet.session_name,
        expert_name=packet.expert_name,
        simulated=packet.simulated,
        places=places,
        allow_ties=packet.allow_ties,
        min_rationale=packet.min_rationale,
        guidelines_html=Markup(markdown_html(packet.guidelines, 1)) if packet.guidelines else None,
        data=data,
    )
