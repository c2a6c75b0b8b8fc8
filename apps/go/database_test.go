// The database endpoints' parts that need no database: N's clamping, the
// pool size, the update batch, the fortunes page (sorted, escaped, UTF-8
// intact), and the 503 every database endpoint answers without DATABASE_URL.
package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestQueriesIsClampedTo1Through500(t *testing.T) {
	cases := map[string]int{
		"/queries":              1,
		"/queries?queries=":     1,
		"/queries?queries=foo":  1,
		"/queries?queries=0":    1,
		"/queries?queries=-3":   1,
		"/queries?queries=1":    1,
		"/queries?queries=20":   20,
		"/queries?queries=500":  500,
		"/queries?queries=501":  500,
		"/queries?queries=9e99": 1,
	}
	for target, want := range cases {
		if got := queriesParam(httptest.NewRequest("GET", target, nil)); got != want {
			t.Errorf("%s: N = %d, want %d", target, got, want)
		}
	}
}

func TestPoolSizeDefaultsTo8(t *testing.T) {
	for text, want := range map[string]int{"": 8, "x": 8, "0": 8, "4": 4, "16": 16} {
		if got := poolSize(text); got != want {
			t.Errorf("DATABASE_POOL_SIZE=%q: %d, want %d", text, got, want)
		}
	}
}

func TestUpdateBatchKeepsTheLastNumberPerIDInIDOrder(t *testing.T) {
	ids, numbers := updateBatch([]world{{7, 1}, {3, 2}, {7, 9}})
	if len(ids) != 2 || ids[0] != 3 || ids[1] != 7 || numbers[0] != 2 || numbers[1] != 9 {
		t.Errorf("ids %v numbers %v", ids, numbers)
	}
}

func TestFortunesAreSortedEscapedAndKeepUTF8(t *testing.T) {
	rec := httptest.NewRecorder()
	renderFortunes(rec, []fortune{
		{11, `<script>alert("This should not be displayed in a browser alert box.");</script>`},
		{12, "フレームワークのベンチマーク"},
		{1, "fortune: No such file or directory"},
		{2, "A computer scientist is someone who fixes things that aren't broken."},
	})
	page := rec.Body.String()
	if strings.Contains(page, "<script>") {
		t.Fatalf("the <script> fortune came back as markup: %s", page)
	}
	for _, want := range []string{
		"&lt;script&gt;alert(&#34;This should not",
		"aren&#39;t broken.",
		"<tr><td>12</td><td>フレームワークのベンチマーク</td></tr>",
		"<tr><td>0</td><td>Additional fortune added at request time.</td></tr>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q: %s", want, page)
		}
	}
	order := []string{"<td>11<", "<td>2<", "<td>0<", "<td>1<", "<td>12<"}
	last := -1
	for _, cell := range order {
		at := strings.Index(page, cell)
		if at < last {
			t.Errorf("%s out of order in %s", cell, page)
		}
		last = at
	}
}

func TestDatabaseEndpointsAnswer503WithoutADatabase(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	srv := httptest.NewServer(withServerHeader(newMux()))
	defer srv.Close()
	for _, path := range []string{"/db", "/queries?queries=2", "/updates", "/fortunes"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("GET %s: status %d, want 503", path, resp.StatusCode)
		}
	}
}
