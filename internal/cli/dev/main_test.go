package dev_test

import (
	"os"
	"testing"

	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
