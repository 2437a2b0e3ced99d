"""Text layout helpers."""

from .wrap import wrap

__all__ = ["wrap"]
