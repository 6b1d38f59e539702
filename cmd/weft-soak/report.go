package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// report renders the soak's results as text.
func report(cfg config, fd *findings, st *stats, tl *timeline, loadEnd time.Time) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("")
	p("== weft-soak report (seed %d, %v, %d clients) ==", cfg.seed, cfg.duration, cfg.concurrency)
	kills := map[string]int{}
	var pg string
	for _, e := range tl.all() {
		switch e.kind {
		case eventKill:
			kills[e.who]++
		case eventPGStop:
			pg = fmt.Sprintf("stopped at +%v", e.at.Sub(tl.start).Round(100*time.Millisecond))
		case eventPGStart:
			pg += fmt.Sprintf(", back at +%v", e.at.Sub(tl.start).Round(100*time.Millisecond))
		}
	}
	total := 0
	var names []string
	for k, n := range kills {
		total += n
		names = append(names, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(names)
	p("chaos       %d SIGKILLs (%s); PostgreSQL %s", total, strings.Join(names, " "), pg)
	st.mu.Lock()
	p("load        actions %s", fmtCounts(st.actions))
	p("responses   %s (0: transport error, e.g. a killed server)", fmtCodes(st.byStatus))
	if len(st.notes) > 0 {
		p("outcomes    %s", fmtCounts(st.notes))
	}
	anomalies := append([]string(nil), st.anomalies...)
	st.mu.Unlock()

	created := 0
	for _, n := range fd.statuses {
		created += n
	}
	p("runs        %d in the database: %s (rolled-back runs are deleted)", created, fmtCounts(fd.statuses))
	e := fd.exec
	p("executions  %d node executions of the counting graphs: %d committed once, %d not committed (killed, fenced or cancelled before their commit), %d of rolled-back runs; %d torn log lines",
		e.executions, e.committed, e.discarded, e.rolledBack, e.torn)
	for _, f := range fd.figures {
		p("            %s", f)
	}
	p("")
	p("runs finished per 10 s window (runs/s):")
	from, to := tl.pgDown()
	for _, w := range fd.windows {
		mark := ""
		ws := tl.start.Add(w.from)
		if !from.IsZero() && ws.Before(to.Add(outageSlack)) && ws.Add(10*time.Second).After(from) {
			mark = "  (PostgreSQL outage)"
		}
		p("  +%-5v %5d  %6.1f/s %s%s", w.from, w.finished, float64(w.finished)/10, strings.Repeat("#", min(w.finished/5, 60)), mark)
	}
	secs := loadEnd.Sub(tl.start).Seconds()
	finished := 0
	for _, w := range fd.windows {
		finished += w.finished
	}
	p("  overall %.1f runs/s over %.0f s", float64(finished)/secs, secs)
	if len(anomalies) > 0 {
		p("")
		p("answers to look at (not violations by themselves):")
		for _, a := range anomalies {
			p("  - %s", a)
		}
	}
	p("")
	if len(fd.violations) == 0 {
		p("PASS: no violation")
	} else {
		p("FAIL: %d violations", len(fd.violations))
		for _, v := range fd.violations {
			p("  - %s", v)
		}
	}
	return b.String()
}

func fmtCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func fmtCodes(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d×%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
