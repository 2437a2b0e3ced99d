"""Operations on closed intervals given as (start, end) pairs with start <= end."""


def merge(intervals):
    """Merge overlapping intervals.

    Returns a new sorted list of disjoint intervals covering the same points; the
    input is not modified.
    """
    merged = []
    for start, end in sorted(intervals):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged
