package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
)

type bleveEngine struct {
	ix   bleve.Index
	path string
}

func newBleve(path string) (*bleveEngine, error) {
	os.RemoveAll(path)
	m := bleve.NewIndexMapping()
	dm := bleve.NewDocumentMapping()
	for _, f := range []string{"path", "heading", "body"} {
		fm := mapping.NewTextFieldMapping()
		fm.Analyzer = en.AnalyzerName
		fm.Store = false
		fm.IncludeTermVectors = false
		dm.AddFieldMappingsAt(f, fm)
	}
	m.DefaultMapping = dm
	ix, err := bleve.New(path, m)
	if err != nil {
		return nil, err
	}
	return &bleveEngine{ix, path}, nil
}

func (b *bleveEngine) add(docs []doc) error {
	batch := b.ix.NewBatch()
	for i, d := range docs {
		if err := batch.Index(strconv.Itoa(i), map[string]any{"path": d.path, "heading": d.heading, "body": d.body}); err != nil {
			return err
		}
		if batch.Size() >= 2000 {
			if err := b.ix.Batch(batch); err != nil {
				return err
			}
			batch = b.ix.NewBatch()
		}
	}
	return b.ix.Batch(batch)
}

// search is a disjunction of match queries over the fields, boosted like
// the files provider's fields (path 0.8, heading 3, body 1).
func (b *bleveEngine) search(q string, limit int) ([]int, error) {
	var qs []query.Query
	for f, boost := range map[string]float64{"path": 0.8, "heading": 3, "body": 1} {
		mq := bleve.NewMatchQuery(q)
		mq.SetField(f)
		mq.SetBoost(boost)
		qs = append(qs, mq)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(qs...), limit, 0, false)
	res, err := b.ix.Search(req)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, h := range res.Hits {
		id, _ := strconv.Atoi(h.ID)
		out = append(out, id)
	}
	return out, nil
}

func (b *bleveEngine) size() int64 {
	var n int64
	_ = filepath.WalkDir(b.path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if st, err := d.Info(); err == nil {
				n += st.Size()
			}
		}
		return nil
	})
	return n
}
