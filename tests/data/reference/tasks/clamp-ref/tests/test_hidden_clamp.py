import unittest

from calc.core import clamp


class ClampTest(unittest.TestCase):
    def test_clamp(self):
        self.assertEqual(clamp(-1, 0, 5), 0)
        self.assertEqual(clamp(9, 0, 5), 5)
        self.assertEqual(clamp(3, 0, 5), 3)
