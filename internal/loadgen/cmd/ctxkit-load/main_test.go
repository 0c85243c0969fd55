package main

import (
	"errors"
	"testing"
)

func TestSameAsFirst(t *testing.T) {
	check := sameAsFirst(func(b []byte) error {
		if string(b) == "bad" {
			return errors.New("bad")
		}
		return nil
	})
	if check([]byte("bad")) == nil {
		t.Fatal("a first body failing the check was accepted")
	}
	for range 2 {
		if check([]byte("good")) != nil {
			t.Fatal("a body identical to the first refused")
		}
	}
	if check([]byte("good!")) == nil {
		t.Fatal("a different body was accepted")
	}
}
