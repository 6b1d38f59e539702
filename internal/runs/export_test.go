package runs

// KwargsDefaults exposes kwargsDefaults to the black-box tests.
var KwargsDefaults = kwargsDefaults
