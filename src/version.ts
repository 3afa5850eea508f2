/** The package version; the daemon refuses clients of another version (R-D-3). */
export const VERSION = '0.1.0';
