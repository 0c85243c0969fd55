package main

import (
	"database/sql"
	"os"
	"strings"

	_ "modernc.org/sqlite"
)

type fts5 struct {
	db   *sql.DB
	path string
}

func newFTS5(path string) (*fts5, error) {
	os.Remove(path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(`PRAGMA journal_mode=WAL; CREATE VIRTUAL TABLE c USING fts5(path, heading, body, tokenize='porter unicode61')`); err != nil {
		return nil, err
	}
	return &fts5{db, path}, nil
}

func (f *fts5) add(docs []doc) error {
	tx, err := f.db.Begin()
	if err != nil {
		return err
	}
	st, err := tx.Prepare(`INSERT INTO c(rowid, path, heading, body) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for i, d := range docs {
		if _, err := st.Exec(i, d.path, d.heading, d.body); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// search ORs the question's words and ranks by bm25 with the same field
// weights as the files provider (path 0.8, heading 3, body 1).
func (f *fts5) search(q string, limit int) ([]int, error) {
	var terms []string
	for _, w := range words(q) {
		terms = append(terms, `"`+w+`"`)
	}
	if len(terms) == 0 {
		return nil, nil
	}
	rows, err := f.db.Query(`SELECT rowid FROM c WHERE c MATCH ? ORDER BY bm25(c, 0.8, 3.0, 1.0) LIMIT ?`, strings.Join(terms, " OR "), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

func (f *fts5) size() int64 {
	var n int64
	for _, s := range []string{"", "-wal"} {
		if st, err := os.Stat(f.path + s); err == nil {
			n += st.Size()
		}
	}
	return n
}
