"""``python -m kernels``: write the contract header (:data:`kernels.CONTRACT_HEADER`) from the
Python contract, next to the sources."""

from pathlib import Path

import kernels

path = Path(kernels.__file__).with_name(kernels.CONTRACT_HEADER)
path.write_text(kernels.contract_header(), encoding="utf-8")
print(path)
