"""Write CSV rows (comma separated, one record per line)."""


def format_field(value):
    """Render one field; None becomes an empty field."""
    text = "" if value is None else str(value)
    if "," in text:
        return '"' + text + '"'
    return text


def format_row(values):
    """Render one record (without the line terminator)."""
    return ",".join(format_field(value) for value in values)
