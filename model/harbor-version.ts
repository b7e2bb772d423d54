/**
 * The Harbor release vero-harbor is tested with: `scripts/ensure-harbor` installs it, the real-Harbor test tier
 * runs it, and the compiler pins it in the task images it emits (a unit test keeps the three equal).
 */
export const HARBOR_VERSION = '0.25.0';
