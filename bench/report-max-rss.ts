/** Preloaded (`node -r`) into a command a bench times: prints the process's peak RSS on stderr as it exits. */
process.on('exit', () => process.stderr.write(`\nmax-rss-kib ${process.resourceUsage().maxRSS}\n`));
