package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/weftdev/weft/internal/reencrypt"
	"github.com/weftdev/weft/internal/server"
)

// reencryptCmd is `weft reencrypt`: the database the flags name (as for
// serve), every encrypted row rewritten under the current key. It prints
// one line per table and exits 0, 2 on a bad config (no key), 1 on
// failure (run it again: it resumes).
func reencryptCmd(args []string, getenv func(string) string, stderr io.Writer) int {
	cfg, code, done := parseConfig(args, getenv, stderr, func(cfg *server.Config) error {
		if cfg.Keyring == nil {
			return errors.New("LANGGRAPH_AES_KEY is not set: reencrypt seals with it (old keys go in WEFT_AES_OLD_KEYS)")
		}
		return nil
	})
	if done {
		return code
	}
	log := cfg.NewLogger(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pool, closeDB, err := server.OpenDatabase(ctx, cfg, log)
	if err != nil {
		log.Error("weft reencrypt: database", "error", err)
		return 1
	}
	defer closeDB()
	_, err = reencrypt.Run(ctx, pool, cfg.Keyring, 500, func(c reencrypt.Count) {
		fmt.Fprintf(stderr, "%-18s scanned %d, rewritten %d, changed meanwhile %d\n", c.Table, c.Scanned, c.Rewritten, c.Skipped)
	})
	if err != nil {
		log.Error("weft reencrypt (run it again to resume)", "error", err)
		return 1
	}
	fmt.Fprintln(stderr, "weft reencrypt: done; every encrypted value is under the current key")
	return 0
}
