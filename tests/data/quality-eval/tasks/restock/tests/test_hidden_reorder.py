import unittest

from shop.stock import reorder


class ReorderTest(unittest.TestCase):
    def test_reorder(self):
        self.assertEqual(reorder({"a": 1, "b": 5, "c": -2}, 3, 10), {"a": 9, "c": 10})
        self.assertEqual(reorder({}, 3, 10), {})
