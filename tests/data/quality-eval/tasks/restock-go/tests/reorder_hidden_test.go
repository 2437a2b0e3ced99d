package shop

import (
	"reflect"
	"testing"
)

func TestHiddenReorder(t *testing.T) {
	got := Reorder(map[string]int{"a": 1, "b": 5, "c": -2}, 3, 10)
	if want := map[string]int{"a": 9, "c": 10}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Reorder = %v, want %v", got, want)
	}
}
