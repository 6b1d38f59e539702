package checkpoints_test

import "github.com/weftdev/weft/internal/checkpoints/cptest"

// The checkpoint-writing helpers these tests share with internal/messagelog's.
type line = cptest.Line

var (
	newLine = cptest.NewLine
	mustPut = cptest.MustPut
	mustGet = cptest.MustGet
)
