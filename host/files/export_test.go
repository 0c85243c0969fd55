package files

// WriteFile is writeFile for the package's external tests, so that both
// kinds of test write their trees with one helper.
var WriteFile = writeFile
