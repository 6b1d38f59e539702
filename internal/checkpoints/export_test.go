package checkpoints

import "github.com/weftdev/weft/internal/checkpoints/ids"

// Internals the package's tests (package checkpoints_test, which shares
// its helpers with internal/messagelog's through cptest) check directly.

var (
	VersionCounter  = ids.VersionCounter
	ParseListHeader = parseListHeader
	DecodeValue     = decodeValue
	SplitList       = splitList
)

const GregorianOffset = ids.GregorianOffset

// ListMetasClear empties the cache of the lists' metadata per checkpoint,
// so a put reads its parent's lists from the database (a cold replica).
func ListMetasClear() { listMetas.clear() }

// BuiltListsClear empties the cache of rebuilt lists, so a read fetches
// every element of its lists.
func BuiltListsClear() { builtLists.Clear() }
