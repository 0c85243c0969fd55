package mcpserver

// Instructions is instructions, for the package's external tests.
const Instructions = instructions
