/** The usage types the routes charge (decisions.md "Quotas and usage"). */
export type UsageTypeKey = 'tokens' | 'images' | 'plagiarismChecks';
