// Checks the pure computations against apps/CONTRACT.md's test vectors and
// its rules for integers in paths.
package main

import (
	"strings"
	"testing"
)

func TestXorshiftMatchesContractVectors(t *testing.T) {
	vectors := map[uint64]uint64{
		0:      11400714819323198485,
		1:      15860402102123842989,
		2:      7273575876580499574,
		10:     10344392119048899982,
		1000:   6248290529083013365,
		100000: 16046154385989997852,
	}
	for iters, want := range vectors {
		if got := xorshift(iters); got != want {
			t.Errorf("xorshift(%d) = %d, want %d", iters, got, want)
		}
	}
}

func TestFibListsF0ToFnExactly(t *testing.T) {
	if got := string(fibText(0)); got != "0" {
		t.Fatalf("fibText(0) = %q", got)
	}
	if got := string(fibText(10)); got != "0 1 1 2 3 5 8 13 21 34 55" {
		t.Fatalf("fibText(10) = %q", got)
	}
	list := strings.Split(string(fibText(4000)), " ")
	last := list[len(list)-1]
	if len(list) != 4001 || len(last) != 836 || !strings.HasPrefix(last, "39909473435004422792") || !strings.HasSuffix(last, "3025993715274875") {
		t.Fatalf("fibText(4000): %d numbers, last %s", len(list), last)
	}
}

func TestCountHasNoTrailingSpace(t *testing.T) {
	if got := string(countText(0)); got != "" {
		t.Fatalf("countText(0) = %q", got)
	}
	if got := string(countText(5)); got != "1 2 3 4 5" {
		t.Fatalf("countText(5) = %q", got)
	}
}

func TestParsePathInt(t *testing.T) {
	const max = 2147483647
	good := map[string]uint64{"0": 0, "5": 5, "007": 7, "2147483647": max, "0002147483647": max}
	for s, want := range good {
		if got, ok := parsePathInt(s, max); !ok || got != want {
			t.Errorf("parsePathInt(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	bad := []string{"", "-1", "+1", "1a", " 1", "1.0", "0x10", "2147483648",
		"18446744073709551616", "99999999999999999999999"}
	for _, s := range bad {
		if got, ok := parsePathInt(s, max); ok {
			t.Errorf("parsePathInt(%q) = %d, accepted", s, got)
		}
	}
}

func TestChurnRuns(t *testing.T) {
	churn(0)
	churn(64)
}
