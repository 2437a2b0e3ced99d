package calc

import "testing"

func TestDouble(t *testing.T) {
	if Double(2) != 4 {
		t.Fatal("Double(2)")
	}
}

func TestParse(t *testing.T) {
	if Parse("ab") != 2 {
		t.Fatal("Parse")
	}
}
