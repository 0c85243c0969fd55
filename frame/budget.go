package frame

// BudgetTokens is the CGP canonical budget-token count of s, a string or
// its bytes: its UTF-8 length in bytes divided by four, rounded up. It is
// an accounting unit, not a count of any model's tokens.
func BudgetTokens[T ~string | ~[]byte](s T) int { return (len(s) + 3) / 4 }
