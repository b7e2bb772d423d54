#!/bin/bash
set -euo pipefail
printf '#!/bin/bash\necho "$1" | rev\n' > /app/reverse.sh
