// HTTP routing and response writing for the contract's endpoints. Each handler
// parses its path integer, does the endpoint's work and serialises the answer
// with encoding/json on every request, as the contract requires.
package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Upper bounds of each endpoint's path integer (apps/CONTRACT.md).
const (
	maxValueID   = 2147483647
	maxCount     = 100000
	maxFib       = 10000
	maxCPUIters  = 10000000
	maxAllocKiB  = 65536
	maxSleepMS   = 10000
	serverHeader = "go-net-http"
)

// hotLock is the one process-wide lock /lock holds while it computes.
var hotLock sync.Mutex

func newMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /plaintext", plaintext)
	mux.HandleFunc("GET /json", jsonHello)
	mux.HandleFunc("GET /values/{id}", withInt("id", maxValueID, values))
	mux.HandleFunc("GET /api/count/{n}", withInt("n", maxCount, count))
	mux.HandleFunc("GET /api/fib/{n}", withInt("n", maxFib, fibonacci))
	mux.HandleFunc("GET /cpu/{iters}", withInt("iters", maxCPUIters, cpu))
	mux.HandleFunc("GET /lock/{iters}", withInt("iters", maxCPUIters, lock))
	mux.HandleFunc("GET /alloc/{kib}", withInt("kib", maxAllocKiB, alloc))
	mux.HandleFunc("GET /sleep/{ms}", withInt("ms", maxSleepMS, sleep))
	mux.HandleFunc("GET /db", dbOne)
	mux.HandleFunc("GET /queries", queries)
	mux.HandleFunc("GET /updates", updates)
	mux.HandleFunc("GET /fortunes", fortunes)
	return mux
}

// withServerHeader sets Server on every response, including the mux's own 404
// and 405 answers; net/http adds Date by itself.
func withServerHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", serverHeader)
		next.ServeHTTP(w, r)
	})
}

// withInt parses the named path integer and answers 400 when it is not a
// plain decimal within [0, max].
func withInt(name string, max uint64, h func(http.ResponseWriter, uint64)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, ok := parsePathInt(r.PathValue(name), max)
		if !ok {
			http.Error(w, "bad "+name+": want decimal digits in 0.."+strconv.FormatUint(max, 10), http.StatusBadRequest)
			return
		}
		h(w, n)
	}
}

func plaintext(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("Hello, World!"))
}

func jsonHello(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, struct {
		Message string `json:"message"`
	}{"Hello, World!"})
}

func values(w http.ResponseWriter, id uint64) {
	writeJSON(w, id)
}

func count(w http.ResponseWriter, n uint64) {
	writeText(w, countText(n))
}

func fibonacci(w http.ResponseWriter, n uint64) {
	writeText(w, fibText(int(n)))
}

type cpuResult struct {
	Result string `json:"result"`
}

func cpu(w http.ResponseWriter, iters uint64) {
	writeJSON(w, cpuResult{strconv.FormatUint(xorshift(iters), 10)})
}

func lock(w http.ResponseWriter, iters uint64) {
	hotLock.Lock()
	x := xorshift(iters)
	hotLock.Unlock()
	writeJSON(w, cpuResult{strconv.FormatUint(x, 10)})
}

func alloc(w http.ResponseWriter, kib uint64) {
	churn(int(kib))
	writeJSON(w, struct {
		AllocatedKiB uint64 `json:"allocated_kib"`
	}{kib})
}

func sleep(w http.ResponseWriter, ms uint64) {
	// A goroutine parked in time.Sleep does not hold an OS thread: this is
	// Go's asynchronous wait.
	time.Sleep(time.Duration(ms) * time.Millisecond)
	writeJSON(w, struct {
		SleptMS uint64 `json:"slept_ms"`
	}{ms})
}

func writeText(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write(body)
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "cannot encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}
