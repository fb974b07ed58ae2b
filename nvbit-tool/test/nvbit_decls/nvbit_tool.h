// prlx's stand-in for NVBit 1.7's nvbit_tool.h, which a tool includes once
// (in the unit defining its callbacks) to link NVBit's start-up. Nothing of
// it is used by name. See README.md: not NVBit's file.
#pragma once
