package frame

// BudgetTokens is the CGP canonical budget-token count of s: its UTF-8 length
// in bytes divided by four, rounded up. It is an accounting unit, not a count
// of any model's tokens.
func BudgetTokens(s string) int { return (len(s) + 3) / 4 }

// BudgetTokensBytes is BudgetTokens for a byte slice.
func BudgetTokensBytes(b []byte) int { return (len(b) + 3) / 4 }
