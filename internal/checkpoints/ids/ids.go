// Package ids mints LangGraph checkpoint ids (UUID v6, increasing) and
// channel versions (the Python saver's string format, unique per call),
// and orders versions of every saver's format.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// GregorianOffset is the number of 100 ns intervals between the UUID epoch
// (1582-10-15) and the Unix epoch.
const GregorianOffset = 0x01B21DD213814000

var (
	idMu       sync.Mutex
	idLastTick uint64
)

// nextTick returns the current time in 100 ns UUID ticks, strictly greater
// than any value it returned before in this process.
func nextTick() uint64 {
	t := uint64(time.Now().UnixNano()/100) + GregorianOffset
	idMu.Lock()
	defer idMu.Unlock()
	if t <= idLastTick {
		t = idLastTick + 1
	}
	idLastTick = t
	return t
}

// NewCheckpointID mints a checkpoint id the way LangGraph does: a
// time-ordered UUID version 6 whose clock sequence is the step, so its
// fourth group reads 8000, 8001, … for steps 0, 1, … and ffff for the input
// checkpoint of step -1 (uint16(step) | 0x8000, the JS saver's layout; not a
// valid RFC 4122 variant for negative steps, so never validate it as one).
// The last six bytes are random.
//
// The first three groups are the big-endian timestamp, so ids compare as
// text in creation order. Within a process ids are strictly increasing even
// when minted in the same 100 ns tick (the tick is bumped), which is what
// makes "latest = greatest checkpoint_id" sound for one writer per thread.
func NewCheckpointID(step int) string {
	t := nextTick()
	var u [16]byte
	binary.BigEndian.PutUint32(u[0:4], uint32(t>>28))
	binary.BigEndian.PutUint16(u[4:6], uint16(t>>12))
	binary.BigEndian.PutUint16(u[6:8], 0x6000|uint16(t&0x0fff))
	binary.BigEndian.PutUint16(u[8:10], uint16(step)|0x8000)
	if _, err := rand.Read(u[10:16]); err != nil {
		panic(fmt.Sprintf("checkpoints: crypto/rand: %v", err))
	}
	var buf [36]byte
	hex.Encode(buf[0:8], u[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], u[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], u[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], u[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], u[10:16])
	return string(buf[:])
}

// Suffix generator for NextVersion: an affine walk modulo 10^16 with a
// random start and a random multiplier coprime to 10^16, so that every call
// in a process yields a different suffix (for 10^16 calls) while suffixes of
// different processes look random.
const suffixModulus = 10_000_000_000_000_000

var (
	suffixOnce  sync.Once
	suffixStart uint64
	suffixStep  uint64
	suffixCount atomic.Uint64
)

func initSuffix() {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("checkpoints: crypto/rand: %v", err))
	}
	suffixStart = binary.BigEndian.Uint64(b[0:8]) % suffixModulus
	step := binary.BigEndian.Uint64(b[8:16]) % suffixModulus
	// coprime to 2^16·5^16: odd and not a multiple of 5
	step |= 1
	if step%5 == 0 {
		step += 2
	}
	suffixStep = step % suffixModulus
}

func nextSuffix() uint64 {
	suffixOnce.Do(initSuffix)
	n := suffixCount.Add(1)
	return (suffixStart + mulMod(n, suffixStep, suffixModulus)) % suffixModulus
}

// mulMod returns a·b mod m without overflow, for m < 2^62.
func mulMod(a, b, m uint64) uint64 {
	var r uint64
	a %= m
	for b > 0 {
		if b&1 == 1 {
			r = (r + a) % m
		}
		a = (a << 1) % m
		b >>= 1
	}
	return r
}

// NextVersion returns the version a channel gets when it is written after
// having version current, in the Python saver's format
// "{counter:032d}.{random}": here "%032d.0.%016d", for example
// "00000000000000000000000000000004.0.2874435221428133". The counter is the
// integer part of current plus one; current may be "" (never written: the
// counter becomes 1), a JS integer version ("3"), or a Python or Weft
// string version ("00000000000000000000000000000003.0.123..."); text without
// a leading integer counts as 0.
//
// The random suffix makes every call's result unique (guaranteed within the
// process, random across processes), so two branches forked from the same
// checkpoint never mint the same version for a channel — the collision that
// silently corrupts forks in the stock JS saver, whose integer versions
// repeat across branches. Versions from NextVersion sort as text by their
// counter; use CompareVersions to order versions of mixed formats.
func NextVersion(current string) string {
	return fmt.Sprintf("%032d.0.%016d", VersionCounter(current)+1, nextSuffix())
}

// VersionCounter parses the leading integer of a version.
func VersionCounter(v string) uint64 {
	end := 0
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	n, err := strconv.ParseUint(v[:end], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// CompareVersions orders channel versions of any saver's format: by their
// integer counter first (so "10" > "9" and the JS saver's "3" <
// "00000000000000000000000000000004.0.5"), then by the rest as text. It
// returns -1, 0 or +1. The empty version (never written) is the smallest.
func CompareVersions(a, b string) int {
	ca, cb := VersionCounter(a), VersionCounter(b)
	switch {
	case ca < cb:
		return -1
	case ca > cb:
		return 1
	}
	ra, rb := strings.TrimLeft(a, "0123456789"), strings.TrimLeft(b, "0123456789")
	return strings.Compare(ra, rb)
}
