package shop

import "testing"

func TestInStock(t *testing.T) {
	if !InStock(map[string]int{"a": 2}, "a") || InStock(map[string]int{"a": 0}, "a") {
		t.Fatal("InStock is wrong")
	}
}
