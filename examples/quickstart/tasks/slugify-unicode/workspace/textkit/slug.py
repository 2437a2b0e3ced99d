"""URL slugs for post titles."""

import re


def slugify(title):
    """Turn a title into a URL slug: lower-case ASCII words joined by hyphens."""
    text = title.lower()
    text = re.sub(r"[^a-z0-9\s-]", "", text)
    return re.sub(r"\s+", "-", text.strip())
