"""Greedy word wrapping."""


def wrap(text, width):
    """Break ``text`` into lines of at most ``width`` characters, splitting at spaces."""
    lines = []
    current = ""
    for word in text.split():
        if current and len(current) + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = current + " " + word if current else word
    if current:
        lines.append(current)
    return lines
