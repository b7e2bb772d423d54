#!/bin/bash
set -euo pipefail
cat > /app/reverse.sh <<'SH'
#!/bin/bash
s="$1" r=''
for ((i = ${#s} - 1; i >= 0; i--)); do r+="${s:i:1}"; done
echo "$r"
SH
