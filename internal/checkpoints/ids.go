package checkpoints

import "github.com/weftdev/weft/internal/checkpoints/ids"

// NewCheckpointID returns a new checkpoint id for a checkpoint of the given
// step (ids.NewCheckpointID).
func NewCheckpointID(step int) string { return ids.NewCheckpointID(step) }

// NextVersion returns the channel version after current (ids.NextVersion).
func NextVersion(current string) string { return ids.NextVersion(current) }

// CompareVersions orders channel versions of any saver's format
// (ids.CompareVersions).
func CompareVersions(a, b string) int { return ids.CompareVersions(a, b) }
