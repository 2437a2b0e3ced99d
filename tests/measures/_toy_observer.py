"""A toy observer module: its source hash is declared by no observer version (frozen-profile tests)."""


def score(text: str) -> int:
    return len(text)
