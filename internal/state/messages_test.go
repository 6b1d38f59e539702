package state_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/server/servertest"
)

type messageRecord struct {
	Seq     int64          `json:"seq"`
	Message map[string]any `json:"message"`
	RunID   *string        `json:"run_id"`
	Step    *int           `json:"step"`
}

type messagePage struct {
	Channel    string          `json:"channel"`
	Checkpoint *ref            `json:"checkpoint"`
	Total      int             `json:"total"`
	Compact    bool            `json:"compact"`
	Records    []messageRecord `json:"records"`
	NextBefore *int64          `json:"next_before"`
}

type summaryRecord struct {
	SummaryID int64  `json:"summary_id"`
	Channel   string `json:"channel"`
	FromSeq   int64  `json:"from_seq"`
	ToSeq     int64  `json:"to_seq"`
	Summary   any    `json:"summary"`
}

type stateWindow struct {
	Channel string         `json:"channel"`
	Total   int            `json:"total"`
	Before  *int64         `json:"before"`
	Seqs    []int64        `json:"seqs"`
	Compact bool           `json:"compact"`
	Summary *summaryRecord `json:"summary"`
}

type windowedState struct {
	Values         map[string]json.RawMessage `json:"values"`
	MessagesWindow *stateWindow               `json:"messages_window"`
}

// turnText is a ~200-character message, so that a few turns make a list
// of 1 KB or more (stored per element).
func turnText(i int, who string) string {
	return fmt.Sprintf("%s turn %d: %s", who, i, strings.Repeat("the quick brown fox jumps over the lazy dog ", 4))
}

// chatThread creates an echo_chat thread of turns human+ai turns written
// by update_state, perStep turns a checkpoint (at most 30 checkpoints in
// the creating request's supersteps, the rest one request each), and
// returns its id.
func chatThread(t *testing.T, s *servertest.Server, turns, perStep int) string {
	t.Helper()
	var steps []any
	for i := 0; i < turns; i += perStep {
		var msgs []any
		for j := i; j < min(i+perStep, turns); j++ {
			msgs = append(msgs, map[string]any{"type": "human", "id": fmt.Sprint("h", j), "content": turnText(j, "human")},
				map[string]any{"type": "ai", "id": fmt.Sprint("a", j), "content": turnText(j, "ai")})
		}
		steps = append(steps, map[string]any{"updates": []any{map[string]any{"as_node": "echo", "values": map[string]any{"messages": msgs}}}})
	}
	first := steps[:min(len(steps), 30)]
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "echo_chat"},
		"supersteps": first}).Map(t)["thread_id"].(string)
	for _, st := range steps[len(first):] {
		update(t, s, tid, st.(map[string]any)["updates"].([]any)[0].(map[string]any))
	}
	return tid
}

// stateMessages is the messages of a state read, each as canonical JSON.
func stateMessages(t *testing.T, s *servertest.Server, path string) []string {
	t.Helper()
	var st struct {
		Values struct {
			Messages []any `json:"messages"`
		} `json:"values"`
	}
	s.Must(http.StatusOK, "GET", path, nil).JSON(t, &st)
	out := make([]string, len(st.Values.Messages))
	for i, m := range st.Values.Messages {
		out[i] = asJSON(m)
	}
	return out
}

// readLog pages the whole message log with query q (limit given) and
// returns its records oldest first.
func readLog(t *testing.T, s *servertest.Server, tid, q string) ([]messageRecord, messagePage) {
	t.Helper()
	var all []messageRecord
	before := ""
	var first messagePage
	for pages := 0; ; pages++ {
		var p messagePage
		s.Must(http.StatusOK, "GET", "/threads/"+tid+"/messages?"+q+before, nil).JSON(t, &p)
		if pages == 0 {
			first = p
		}
		if p.Total != first.Total || p.Checkpoint == nil || *p.Checkpoint != *first.Checkpoint {
			t.Fatalf("page %d: total %d at %+v, first page %d at %+v", pages, p.Total, p.Checkpoint, first.Total, first.Checkpoint)
		}
		for i := 1; i < len(p.Records); i++ {
			if p.Records[i].Seq == p.Records[i-1].Seq {
				t.Fatalf("page %d repeats seq %d", pages, p.Records[i].Seq)
			}
		}
		all = append(all, p.Records...)
		if p.NextBefore == nil {
			break
		}
		if *p.NextBefore != p.Records[len(p.Records)-1].Seq {
			t.Fatalf("next_before %d is not the page's oldest seq %d", *p.NextBefore, p.Records[len(p.Records)-1].Seq)
		}
		before = fmt.Sprintf("&before=%d", *p.NextBefore)
	}
	slices.Reverse(all)
	return all, first
}

func logMessages(recs []messageRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = asJSON(r.Message)
	}
	return out
}

func equalLists(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d:\n got  %s\n want %s", what, i, got[i], want[i])
		}
	}
}

// TestMessageLogLongThread reads a 1,000-turn thread (plus two runs)
// through the message log, a window and summaries.
func TestMessageLogLongThread(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const turns = 1000
	tid := chatThread(t, s, turns, 100)
	var runIDs []string
	for i := range 2 {
		run := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "echo_chat",
			"input": map[string]any{"messages": []any{map[string]any{"type": "human", "id": fmt.Sprint("run", i), "content": turnText(i, "run")}}}}).Map(t)
		runIDs = append(runIDs, run["run_id"].(string))
		s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+run["run_id"].(string)+"/join", nil)
	}
	full := stateMessages(t, s, "/threads/"+tid+"/state")
	if len(full) != 2*turns+4 {
		t.Fatalf("%d messages", len(full))
	}

	// The whole log, in pages of an odd size, is the state's list; an
	// append-only conversation's seqs are 1..n.
	recs, first := readLog(t, s, tid, "limit=173")
	equalLists(t, "log", logMessages(recs), full)
	if !first.Compact || first.Total != len(full) || first.Channel != "messages" || len(first.Records) != 173 {
		t.Fatalf("first page: compact %v total %d channel %q, %d records", first.Compact, first.Total, first.Channel, len(first.Records))
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
	}
	// Run and step: update_state's messages have no run and steps that
	// never decrease; each run's messages carry the run and the step of the
	// checkpoint that first held them.
	prev := -10
	for _, r := range recs[:2*turns] {
		if r.RunID != nil || r.Step == nil || *r.Step < prev {
			t.Fatalf("seq %d: run %v step %v (previous step %d)", r.Seq, r.RunID, r.Step, prev)
		}
		prev = *r.Step
	}
	for i, id := range runIDs {
		var hist []struct {
			Metadata map[string]any `json:"metadata"`
			Values   struct {
				Messages []map[string]any `json:"messages"`
			} `json:"values"`
		}
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{"limit": 10, "metadata": map[string]any{"run_id": id}}).JSON(t, &hist)
		for j, r := range recs[2*turns+2*i : 2*turns+2*i+2] {
			// The oldest checkpoint of the run that holds the message.
			want := -100
			for _, h := range hist {
				if slices.ContainsFunc(h.Values.Messages, func(m map[string]any) bool { return m["id"] == r.Message["id"] }) {
					want = int(h.Metadata["step"].(float64))
				}
			}
			if r.RunID == nil || *r.RunID != id || r.Step == nil || *r.Step != want {
				t.Fatalf("run %d message %d: run %v step %v, want %s step %d", i, j, r.RunID, r.Step, id, want)
			}
		}
	}

	// A window is the last k of the whole list, and the rest of the state
	// is the whole read's, byte for byte; its cursor pages on.
	wholeRaw := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil).Body
	if strings.Contains(string(wholeRaw), "messages_window") {
		t.Fatal("a state read without the opt-in describes a window")
	}
	var ws windowedState
	winRaw := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state?messages_window=50", nil)
	winRaw.JSON(t, &ws)
	var winMsgs []any
	if err := json.Unmarshal(ws.Values["messages"], &winMsgs); err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(winMsgs))
	for i, m := range winMsgs {
		got[i] = asJSON(m)
	}
	equalLists(t, "window", got, full[len(full)-50:])
	w := ws.MessagesWindow
	if w == nil || w.Total != len(full) || w.Channel != "messages" || !w.Compact || w.Before == nil || *w.Before != int64(len(full)-49) ||
		len(w.Seqs) != 50 || w.Seqs[49] != int64(len(full)) || w.Summary != nil {
		t.Fatalf("window = %+v", w)
	}
	var whole, windowed map[string]any
	_ = json.Unmarshal(wholeRaw, &whole)
	_ = json.Unmarshal(winRaw.Body, &windowed)
	delete(windowed, "messages_window")
	windowed["values"].(map[string]any)["messages"] = whole["values"].(map[string]any)["messages"]
	if asJSON(windowed) != asJSON(whole) {
		t.Fatalf("windowed state differs beyond the window:\n%s\n%s", asJSON(windowed)[:300], asJSON(whole)[:300])
	}
	var older messagePage
	s.Must(http.StatusOK, "GET", fmt.Sprintf("/threads/%s/messages?before=%d&limit=50", tid, *w.Before), nil).JSON(t, &older)
	oldest := logMessages(older.Records)
	slices.Reverse(oldest)
	equalLists(t, "page before the window", oldest, full[len(full)-100:len(full)-50])
	// The same window at a checkpoint, by GET and by POST.
	cp := whole["checkpoint"].(map[string]any)["checkpoint_id"].(string)
	var atGet, atPost windowedState
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state/"+cp+"?messages_window=50", nil).JSON(t, &atGet)
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": cp},
		"messages_window": 50}).JSON(t, &atPost)
	if string(atGet.Values["messages"]) != string(ws.Values["messages"]) || string(atPost.Values["messages"]) != string(ws.Values["messages"]) ||
		asJSON(atPost.MessagesWindow) != asJSON(w) {
		t.Fatal("the window at the latest checkpoint's id differs")
	}

	// Summaries: records beside the state; the widest that ends before
	// the window wins.
	add := func(from, to int, summary any) summaryRecord {
		var rec summaryRecord
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/summaries", map[string]any{"from_seq": from, "to_seq": to, "summary": summary}).JSON(t, &rec)
		if rec.FromSeq != int64(from) || rec.ToSeq != int64(to) || rec.Channel != "messages" || rec.SummaryID == 0 {
			t.Fatalf("summary = %+v", rec)
		}
		return rec
	}
	s1 := add(1, 100, "first hundred")
	s2 := add(1, 500, map[string]any{"text": "first five hundred", "topics": []any{"foxes"}})
	s3 := add(1100, 1210, "eleven hundred on")
	add(1900, 2004, "the end") // overlaps the window: never shown with it
	window := func(k int) stateWindow {
		var ws windowedState
		s.Must(http.StatusOK, "GET", fmt.Sprintf("/threads/%s/state?messages_window=%d&summary=true", tid, k), nil).JSON(t, &ws)
		if ws.MessagesWindow == nil {
			t.Fatal("no window")
		}
		return *ws.MessagesWindow
	}
	wantSummary := func(k int, before int64, want *summaryRecord) {
		t.Helper()
		w := window(k)
		if *w.Before != before {
			t.Fatalf("window of %d starts at seq %d, want %d", k, *w.Before, before)
		}
		if want == nil && w.Summary != nil || want != nil && (w.Summary == nil || asJSON(*w.Summary) != asJSON(*want)) {
			t.Fatalf("summary of the %d-window = %+v, want %+v", k, w.Summary, want)
		}
	}
	wantSummary(50, 1955, &s2)  // the widest of three ending before it
	wantSummary(705, 1300, &s2) // wider beats later
	wantSummary(1000, 1005, &s2)
	if raw := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state?messages_window=1000&summary=1", nil).Map(t); raw["messages_window"].(map[string]any)["summary"] == nil {
		t.Fatal("summary=1 not honoured")
	}
	var list []summaryRecord
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/summaries", nil).JSON(t, &list)
	if len(list) != 4 || list[0].SummaryID != s2.SummaryID || list[1].SummaryID != s3.SummaryID || list[3].SummaryID != s1.SummaryID {
		t.Fatalf("summaries = %+v", list)
	}
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/summaries?covering=50&limit=5", nil).JSON(t, &list)
	if len(list) != 2 || list[0].SummaryID != s2.SummaryID || list[1].SummaryID != s1.SummaryID {
		t.Fatalf("summaries covering 50 = %+v", list)
	}
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/summaries?before=1300&channel=messages", nil).JSON(t, &list)
	if len(list) != 3 || list[0].SummaryID != s2.SummaryID {
		t.Fatalf("summaries before 1300 = %+v", list)
	}
	var none windowedState
	noneRaw := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state?messages_window=1000&window_channel=nothing&summary=true", nil)
	noneRaw.JSON(t, &none)
	if !strings.Contains(string(noneRaw.Body), `"summary":null`) || none.MessagesWindow.Total != 0 || none.MessagesWindow.Before != nil {
		t.Fatalf("window of an unset channel: %s", noneRaw.Body[len(noneRaw.Body)-200:])
	}
	// Summaries never change the state.
	if after := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil).Body; string(after) != string(wholeRaw) {
		t.Fatal("the state changed with summaries")
	}
	// The window fields' defaults, which the API's schema declares and a
	// client generated from it sends, ask for nothing: the whole state.
	for _, q := range []string{"window_channel=messages", "window_channel=messages&summary=false", "summary=false"} {
		if got := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state?"+q, nil).Body; string(got) != string(wholeRaw) {
			t.Fatalf("GET /state?%s is not the whole state", q)
		}
	}
	if got := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state/checkpoint", map[string]any{"checkpoint": map[string]any{},
		"window_channel": "messages", "summary": false}).Body; strings.Contains(string(got), "messages_window") {
		t.Fatalf("POST /state/checkpoint with the window defaults opened a window: %s", got)
	}

	// Bad input is refused and changes nothing.
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		detail       string
	}{
		{"GET", "/state?messages_window=0", nil, 422, "messages_window"},
		{"GET", "/state?messages_window=1001", nil, 422, "messages_window"},
		{"GET", "/state?messages_window=x", nil, 422, "messages_window"},
		{"GET", "/state?summary=true", nil, 422, "need messages_window"},
		{"GET", "/state?window_channel=other", nil, 422, "need messages_window"},
		{"GET", "/state?summary=maybe", nil, 422, "summary"},
		{"POST", "/state/checkpoint", map[string]any{"checkpoint": map[string]any{}, "window_channel": "other"}, 422, "need messages_window"},
		{"POST", "/state/checkpoint", map[string]any{"checkpoint": map[string]any{}, "summary": true}, 422, "need messages_window"},
		{"POST", "/state/checkpoint", map[string]any{"checkpoint": map[string]any{}, "messages_window": 0}, 422, "messages_window"},
		{"GET", "/messages?before=999999", nil, 400, "seq 999999 is not in channel"},
		{"GET", "/messages?before=0", nil, 422, "before"},
		{"GET", "/messages?limit=0", nil, 422, "limit"},
		{"GET", "/messages?limit=1001", nil, 422, "limit"},
		{"GET", "/messages?checkpoint_id=nope", nil, 422, "checkpoint ID"},
		{"GET", "/messages?checkpoint_id=" + url.QueryEscape("1f000000-0000-6000-8000-000000000000"), nil, 404, "not found"},
		{"POST", "/summaries", map[string]any{"from_seq": 0, "to_seq": 3, "summary": "x"}, 400, "range"},
		{"POST", "/summaries", map[string]any{"from_seq": 5, "to_seq": 3, "summary": "x"}, 400, "range"},
		{"POST", "/summaries", map[string]any{"from_seq": 5, "to_seq": 99999, "summary": "x"}, 400, "seqs up to 2004"},
		{"POST", "/summaries", map[string]any{"from_seq": 1, "to_seq": 100, "summary": "again"}, 409, "already has a summary"},
		{"POST", "/summaries", map[string]any{"from_seq": 1, "to_seq": 3}, 422, "summary"},
		{"POST", "/summaries", map[string]any{"from_seq": 1, "to_seq": 3, "summary": nil}, 422, "summary"},
		{"POST", "/summaries", map[string]any{"to_seq": 3, "summary": "x"}, 422, "from_seq"},
		{"POST", "/summaries", map[string]any{"from_seq": "a", "to_seq": 3, "summary": "x"}, 422, "from_seq"},
		{"GET", "/summaries?covering=-1", nil, 422, "covering"},
		{"DELETE", "/summaries/abc", nil, 422, "summary ID"},
		{"DELETE", "/summaries/999999", nil, 404, "not found"},
	} {
		r := s.Do(c.method, "/threads/"+tid+c.path, c.body)
		if r.Status != c.status || !strings.Contains(r.Detail(t), c.detail) {
			t.Fatalf("%s %s: %d %s, want %d %q", c.method, c.path, r.Status, r.Body, c.status, c.detail)
		}
	}
	s.Must(http.StatusNotFound, "GET", "/threads/00000000-0000-4000-8000-000000000000/messages", nil)
	s.Must(http.StatusNotFound, "POST", "/threads/00000000-0000-4000-8000-000000000000/summaries", map[string]any{"from_seq": 1, "to_seq": 1, "summary": "x"})
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/summaries", nil).JSON(t, &list)
	if len(list) != 4 {
		t.Fatalf("%d summaries after refused requests", len(list))
	}
	s.Must(http.StatusNoContent, "DELETE", fmt.Sprintf("/threads/%s/summaries/%d", tid, s2.SummaryID), nil)
	wantSummary(705, 1300, &s3)
	wantSummary(1000, 1005, &s1)
	s.Must(http.StatusNoContent, "DELETE", fmt.Sprintf("/threads/%s/summaries/%d", tid, s1.SummaryID), nil)
	wantSummary(1000, 1005, nil)
	s.Must(http.StatusNotFound, "DELETE", fmt.Sprintf("/threads/%s/summaries/%d", tid, s1.SummaryID), nil)
}

// TestMessageLogBranchesAndEdits: the log follows the current branch (or
// the given checkpoint), shows replaced and removed messages as the state
// does, short lists number by position, and summaries go with a thread's
// copy and deletion.
func TestMessageLogBranchesAndEdits(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := chatThread(t, s, 30, 1)
	hist := history(t, s, tid, map[string]any{"limit": 30})
	mainLatest := hist[0].Checkpoint.CheckpointID
	tenth := hist[len(hist)-10].Checkpoint.CheckpointID // after 10 turns

	// A fork from turn 10 is the latest checkpoint: the current branch.
	update(t, s, tid, map[string]any{"checkpoint_id": tenth, "as_node": "echo",
		"values": map[string]any{"messages": []any{map[string]any{"type": "human", "id": "fork", "content": turnText(0, "fork")}}}})
	forkFull := stateMessages(t, s, "/threads/"+tid+"/state")
	recs, page := readLog(t, s, tid, "limit=7")
	equalLists(t, "fork branch", logMessages(recs), forkFull)
	if len(forkFull) != 21 || page.Checkpoint.CheckpointID == mainLatest {
		t.Fatalf("fork: %d messages at %+v", len(forkFull), page.Checkpoint)
	}
	if recs[20].Seq != 61 { // the fork's new message takes the thread's next seq
		t.Fatalf("fork message seq %d", recs[20].Seq)
	}
	mainRecs, _ := readLog(t, s, tid, "limit=1000&checkpoint_id="+mainLatest)
	equalLists(t, "main branch", logMessages(mainRecs), stateMessages(t, s, "/threads/"+tid+"/state/"+mainLatest))
	for i := range 20 {
		if mainRecs[i].Seq != recs[i].Seq {
			t.Fatalf("shared message %d: seq %d on main, %d on the fork", i, mainRecs[i].Seq, recs[i].Seq)
		}
	}

	// Replace by id and RemoveMessage on the compact list.
	update(t, s, tid, map[string]any{"as_node": "echo", "values": map[string]any{"messages": []any{
		map[string]any{"type": "human", "id": "h3", "content": "replaced"},
		map[string]any{"type": "remove", "id": "a5"},
	}}})
	edited := stateMessages(t, s, "/threads/"+tid+"/state")
	recs, page = readLog(t, s, tid, "limit=6")
	equalLists(t, "edited", logMessages(recs), edited)
	if len(recs) != 20 || recs[6].Message["content"] != "replaced" || recs[6].Seq != 62 || !page.Compact {
		t.Fatalf("edited log: %d records, [6] = %+v", len(recs), recs[6])
	}
	for _, r := range recs {
		if r.Message["id"] == "a5" {
			t.Fatal("removed message still in the log")
		}
	}
	r := s.Do("GET", "/threads/"+tid+"/messages?before=12", nil) // a5's seq
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), "seq 12 is not in channel") {
		t.Fatalf("before a removed message's seq: %d %s", r.Status, r.Body)
	}
	var ws windowedState
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state?messages_window=3", nil).JSON(t, &ws)
	if got := asJSON(ws.MessagesWindow.Seqs); got != asJSON([]int64{recs[17].Seq, recs[18].Seq, recs[19].Seq}) {
		t.Fatalf("window seqs %s", got)
	}

	// Copy keeps the log and the summaries; delete removes the summaries.
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/summaries", map[string]any{"from_seq": 1, "to_seq": 10, "summary": "start"})
	cp := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/copy", nil).Map(t)["thread_id"].(string)
	copyRecs, _ := readLog(t, s, cp, "limit=1000")
	if asJSON(copyRecs) != asJSON(recs) {
		t.Fatal("the copy's log differs")
	}
	var list []summaryRecord
	s.Must(http.StatusOK, "GET", "/threads/"+cp+"/summaries", nil).JSON(t, &list)
	if len(list) != 1 || list[0].Summary != "start" {
		t.Fatalf("copied summaries %+v", list)
	}
	s.Must(http.StatusNoContent, "DELETE", "/threads/"+tid, nil)
	var n int
	if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM thread_summaries WHERE thread_id = $1`, tid).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d summaries left after delete (%v)", n, err)
	}
	s.Must(http.StatusOK, "GET", "/threads/"+cp+"/summaries", nil).JSON(t, &list)
	if len(list) != 1 {
		t.Fatal("deleting the original deleted the copy's summaries")
	}

	// A short list (under 1 KB, stored whole) numbers by position.
	short := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "echo_chat"}}).Map(t)["thread_id"].(string)
	var empty messagePage
	s.Must(http.StatusOK, "GET", "/threads/"+short+"/messages", nil).JSON(t, &empty)
	if empty.Total != 0 || empty.Checkpoint != nil || len(empty.Records) != 0 {
		t.Fatalf("log of a thread without checkpoints: %+v", empty)
	}
	s.Must(http.StatusOK, "GET", "/threads/"+short+"/state?messages_window=5&summary=true", nil).JSON(t, &ws)
	if ws.MessagesWindow == nil || ws.MessagesWindow.Total != 0 {
		t.Fatalf("window of a thread without checkpoints: %+v", ws.MessagesWindow)
	}
	update(t, s, short, map[string]any{"as_node": "echo", "values": map[string]any{"messages": []any{"hi", "there", "you"}}})
	recs, page = readLog(t, s, short, "limit=2")
	equalLists(t, "short", logMessages(recs), stateMessages(t, s, "/threads/"+short+"/state"))
	if page.Compact || len(recs) != 3 || recs[0].Seq != 1 || recs[2].Seq != 3 || recs[1].RunID != nil || recs[1].Step != nil {
		t.Fatalf("short log %+v", recs)
	}
	s.Must(http.StatusOK, "GET", "/threads/"+short+"/state?messages_window=2&summary=true", nil).JSON(t, &ws)
	if w := ws.MessagesWindow; w.Compact || *w.Before != 2 || asJSON(w.Seqs) != "[2,3]" || w.Total != 3 {
		t.Fatalf("short window %+v", w)
	}
	s.Must(http.StatusOK, "POST", "/threads/"+short+"/summaries", map[string]any{"from_seq": 1, "to_seq": 3, "summary": "all"})
	s.Must(http.StatusBadRequest, "POST", "/threads/"+short+"/summaries", map[string]any{"from_seq": 1, "to_seq": 4, "summary": "x"})
}
