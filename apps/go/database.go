// The contract's database endpoints (apps/CONTRACT.md, "Database"):
// TechEmpower's /db, /queries, /fortunes and /updates over PostgreSQL with
// pgx, Go's most-used driver, through its pgxpool connection pool (size from
// DATABASE_POOL_SIZE, the manifest's db_pool knob). pgx prepares and caches
// each statement on every connection by itself. The pool connects lazily, so
// the server starts and serves every other endpoint without a database; the
// four endpoints then answer 503.
package main

import (
	"context"
	"errors"
	"html/template"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	worldRows      = 10000
	maxQueries     = 500
	defaultPool    = 8
	addedFortune   = "Additional fortune added at request time."
	selectWorld    = "SELECT id, randomnumber FROM world WHERE id = $1"
	selectFortunes = "SELECT id, message FROM fortune"
	// One statement for the whole batch; rows are locked in id order, so
	// concurrent batches cannot deadlock.
	updateWorlds = "UPDATE world SET randomnumber = v.r FROM (SELECT unnest($1::int[]) AS id, unnest($2::int[]) AS r) AS v WHERE world.id = v.id"
)

type world struct {
	ID           int32 `json:"id"`
	RandomNumber int32 `json:"randomNumber"`
}

type fortune struct {
	ID      int32
	Message string
}

var fortunesPage = template.Must(template.New("fortunes").Parse(`<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>{{range .}}<tr><td>{{.ID}}</td><td>{{.Message}}</td></tr>{{end}}</table></body></html>`))

var errNoDatabase = errors.New("DATABASE_URL is not set")

// database is the process's one pool, made on first use.
var database struct {
	once sync.Once
	pool *pgxpool.Pool
	err  error
}

func pool() (*pgxpool.Pool, error) {
	database.once.Do(func() {
		url := os.Getenv("DATABASE_URL")
		if url == "" {
			database.err = errNoDatabase
			return
		}
		config, err := pgxpool.ParseConfig(url)
		if err != nil {
			database.err = err
			return
		}
		config.MaxConns = int32(poolSize(os.Getenv("DATABASE_POOL_SIZE")))
		database.pool, database.err = pgxpool.NewWithConfig(context.Background(), config)
	})
	return database.pool, database.err
}

// poolSize reads DATABASE_POOL_SIZE: a positive integer, else 8.
func poolSize(text string) int {
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 {
		return defaultPool
	}
	return n
}

// queriesParam is the contract's N: 1..500, and 1 when missing or not a number.
func queriesParam(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("queries"))
	switch {
	case err != nil || n < 1:
		return 1
	case n > maxQueries:
		return maxQueries
	default:
		return n
	}
}

func randomID() int32 {
	return int32(rand.IntN(worldRows)) + 1
}

// unavailable answers 503 when there is no database to ask.
func unavailable(w http.ResponseWriter, err error) {
	http.Error(w, "database unavailable: "+err.Error(), http.StatusServiceUnavailable)
}

func readWorld(ctx context.Context, p *pgxpool.Pool, id int32) (world, error) {
	var row world
	err := p.QueryRow(ctx, selectWorld, id).Scan(&row.ID, &row.RandomNumber)
	return row, err
}

func readWorlds(ctx context.Context, p *pgxpool.Pool, n int) ([]world, error) {
	rows := make([]world, n)
	for i := range rows {
		row, err := readWorld(ctx, p, randomID())
		if err != nil {
			return nil, err
		}
		rows[i] = row
	}
	return rows, nil
}

func dbOne(w http.ResponseWriter, r *http.Request) {
	p, err := pool()
	if err != nil {
		unavailable(w, err)
		return
	}
	row, err := readWorld(r.Context(), p, randomID())
	if err != nil {
		unavailable(w, err)
		return
	}
	writeJSON(w, row)
}

// readRequested reads the request's N random rows; on failure it has
// answered 503 and returns a nil pool.
func readRequested(w http.ResponseWriter, r *http.Request) (*pgxpool.Pool, []world) {
	p, err := pool()
	if err != nil {
		unavailable(w, err)
		return nil, nil
	}
	rows, err := readWorlds(r.Context(), p, queriesParam(r))
	if err != nil {
		unavailable(w, err)
		return nil, nil
	}
	return p, rows
}

func queries(w http.ResponseWriter, r *http.Request) {
	if p, rows := readRequested(w, r); p != nil {
		writeJSON(w, rows)
	}
}

func updates(w http.ResponseWriter, r *http.Request) {
	p, rows := readRequested(w, r)
	if p == nil {
		return
	}
	for i := range rows {
		rows[i].RandomNumber = randomID()
	}
	ids, numbers := updateBatch(rows)
	if _, err := p.Exec(r.Context(), updateWorlds, ids, numbers); err != nil {
		unavailable(w, err)
		return
	}
	writeJSON(w, rows)
}

// updateBatch is the UPDATE's arrays: one entry per id (the last answer for
// an id drawn twice), in id order.
func updateBatch(rows []world) (ids, numbers []int32) {
	last := make(map[int32]int32, len(rows))
	for _, row := range rows {
		last[row.ID] = row.RandomNumber
	}
	for id := range last {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		numbers = append(numbers, last[id])
	}
	return ids, numbers
}

func fortunes(w http.ResponseWriter, r *http.Request) {
	p, err := pool()
	if err != nil {
		unavailable(w, err)
		return
	}
	rows, err := p.Query(r.Context(), selectFortunes)
	if err != nil {
		unavailable(w, err)
		return
	}
	list := []fortune{}
	for rows.Next() {
		var f fortune
		if err := rows.Scan(&f.ID, &f.Message); err != nil {
			rows.Close()
			unavailable(w, err)
			return
		}
		list = append(list, f)
	}
	if err := rows.Err(); err != nil {
		unavailable(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	renderFortunes(w, list)
}

// renderFortunes adds the request-time fortune, sorts by message (Go strings
// compare byte-wise, which for UTF-8 is code-point order) and renders the
// page; html/template escapes every message.
func renderFortunes(w http.ResponseWriter, list []fortune) {
	list = append(list, fortune{ID: 0, Message: addedFortune})
	sort.Slice(list, func(i, j int) bool { return list[i].Message < list[j].Message })
	if err := fortunesPage.Execute(w, list); err != nil {
		http.Error(w, "cannot render fortunes", http.StatusInternalServerError)
	}
}
