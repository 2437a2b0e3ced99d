"""Independent review of submissions: the packet, the call, the response schema.

Layer: uses ``events``, ``tasks``, ``environments`` and ``harnesses``; used by ``actors``
(the reviewer actor and ``pluginbench review``) and ``projections`` (the report's counts).
"""

from typing import TYPE_CHECKING

from .._lazy import lazy
from ..errors import MalformedResponse, PacketError

if TYPE_CHECKING:
    from ._call import REVIEWER_ARM, Answer, Reviewer, ReviewOutcome, ask_in_packet, review_once
    from ._packet import Packet, build_packet, packet_dir, verify_packet
    from ._prompt import MARKER, review_prompt
    from ._response import CATEGORIES, RESPONSE_SCHEMA, SEVERITIES, final_message, parse_response
    from ._simulated import simulated_findings

DEFAULT_CRITERIA = "criteria.md"


def default_criteria() -> bytes:
    """PluginBench's built-in review criteria (used when ``reviewer.criteria`` is null)."""
    from importlib import resources

    return resources.files(__package__).joinpath(DEFAULT_CRITERIA).read_bytes()


__all__ = [
    "Answer",
    "CATEGORIES",
    "MARKER",
    "RESPONSE_SCHEMA",
    "REVIEWER_ARM",
    "SEVERITIES",
    "MalformedResponse",
    "Packet",
    "PacketError",
    "ReviewOutcome",
    "Reviewer",
    "ask_in_packet",
    "build_packet",
    "default_criteria",
    "final_message",
    "packet_dir",
    "parse_response",
    "review_once",
    "review_prompt",
    "simulated_findings",
    "verify_packet",
]

__getattr__ = lazy(__name__, __file__)
