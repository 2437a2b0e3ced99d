def in_stock(levels, item):
    return levels.get(item, 0) > 0
