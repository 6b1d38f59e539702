package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// requestLine matches the servers' request log lines (text format):
// time=… level=… msg=request … method=M path=P status=S ….
var requestLine = regexp.MustCompile(`^time=(\S+) level=\S+ msg=request .*? method=(\S+) path=(\S+) status=(\d+)`)

// internalLine matches an "internal error" log line, which carries the error.
var internalLine = regexp.MustCompile(`^time=\S+ level=ERROR msg="internal error" (.*)$`)

// checkServerLogs applies the 5xx rule to every response the servers
// logged, the worker API's included (the load clients see only theirs):
// no 5xx but 503, and 503 only during the PostgreSQL outage. It lists the
// internal errors logged with them.
func checkServerLogs(fd *findings, dir string, tl *timeline) error {
	files, err := filepath.Glob(filepath.Join(dir, "s*.log"))
	if err != nil {
		return err
	}
	logged503, bad := 0, 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := internalLine.FindStringSubmatch(line); m != nil {
				fd.violate("%s logged an internal error: %s", filepath.Base(name), truncate([]byte(m[1]), 400))
				continue
			}
			m := requestLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			status, _ := strconv.Atoi(m[4])
			if status < 500 {
				continue
			}
			at, _ := time.Parse(time.RFC3339Nano, m[1])
			switch {
			case status == 503 && tl.duringOutage(at, outageSlack):
				logged503++
			default:
				bad++
				if bad <= 20 {
					fd.violate("%s answered %d to %s %s at %s", filepath.Base(name), status, m[2], m[3], at.Format("15:04:05.000"))
				}
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
	if bad > 20 {
		fd.violate("%d more 5xx in the server logs", bad-20)
	}
	fd.figure("the servers answered %d requests (worker API included) with 503 during the outage", logged503)
	return nil
}
