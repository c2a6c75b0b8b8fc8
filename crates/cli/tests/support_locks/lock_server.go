// A Go net/http server that serialises every request on one sync.Mutex:
// the handler takes the mutex and holds it across a blocking wait of HOLD_US
// microseconds (a call to a slow backend made under a global lock, the
// classic way a lock ends up on the request path), so requests queue behind
// each other while the CPU stays free. Used by the tests of `stampede
// explain` (explain_locks.rs) as the server whose lock must be named.
//
// Go parks a goroutine that waits for a mutex in its own scheduler, not on a
// futex; the OS threads (Ms) left with nothing to run park on futexes in
// turn. That is what the probe sees of a Go lock, as of Go's idle Ms: the
// difference is that here requests are in flight, waiting, while it happens.
//
// Usage: PORT=8080 HOLD_US=2000 lock_server <marker>
package main

import (
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

func main() {
	hold, err := strconv.Atoi(os.Getenv("HOLD_US"))
	if err != nil {
		hold = 2000
	}
	var mu sync.Mutex
	var x uint64 = 88172645463325252
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		time.Sleep(time.Duration(hold) * time.Microsecond)
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v := x
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strconv.FormatUint(v%10, 10)))
	})
	if err := http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil); err != nil {
		panic(err)
	}
}
