# A stand-in for pspsdk's lib/build.mak, written here: only the variables and rules
# src/ports/psp/Makefile relies on, so that `make -n PSPSDK=sdk_stand_in` prints what pspdev's
# build would run (scripts/ports/check-psp). Laid out as an installed SDK is (lib/, include/), so
# that PSPSDK can point here in place of `psp-config --pspsdk-path`. Nothing here is run.
ifeq ($(PSPSDK),)
  $(error PSPSDK is not set)
endif
CC = psp-gcc
CXX = psp-g++
LD = psp-gcc

# The port's include directories, then its own and the SDK's; the C flags come first in C++.
INCDIR := $(INCDIR) . $(PSPSDK)/include
CFLAGS := $(addprefix -I,$(INCDIR)) $(CFLAGS)
CXXFLAGS := $(CFLAGS) $(CXXFLAGS)

# MEMSIZE=1 (the larger user partition where the model has one) for firmware above 3.90, the
# default 6.00, unless PSP_LARGE_MEMORY=0; 2 asks for the PS Vita's 40 MB.
PSP_FW_VERSION ?= 600
EXPAND_MEMORY = 0
ifeq ($(shell test $(PSP_FW_VERSION) -gt 390; echo $$?),0)
  EXPAND_MEMORY = 1
  ifeq ($(PSP_LARGE_MEMORY),0)
    EXPAND_MEMORY = 0
  else ifeq ($(PSP_LARGE_MEMORY),2)
    EXPAND_MEMORY = 2
  endif
else ifneq ($(filter 1 2,$(PSP_LARGE_MEMORY)),)
  EXPAND_MEMORY = $(PSP_LARGE_MEMORY)
endif
CFLAGS += -D_PSP_FW_VERSION=$(PSP_FW_VERSION)
CXXFLAGS += -D_PSP_FW_VERSION=$(PSP_FW_VERSION)

LIBS := $(LIBS) -lpspdebug -lpspdisplay -lpspge -lpspctrl
PSP_EBOOT_TITLE ?= $(TARGET)
FINAL_TARGET = $(TARGET).elf

all: $(EXTRA_TARGETS) $(FINAL_TARGET)

# The objects linked (make's built-in rules compile them), then stripped into EBOOT.PBP.
$(TARGET).elf: $(OBJS)
	$(LINK.c) $^ $(LIBS) -o $@
	psp-fixup-imports $@

PARAM.SFO:
	mksfoex -d MEMSIZE=$(EXPAND_MEMORY) '$(PSP_EBOOT_TITLE)' $@

EBOOT.PBP: $(TARGET).elf PARAM.SFO
	psp-strip $(TARGET).elf -o $(TARGET)_strip.elf
	pack-pbp $@ PARAM.SFO NULL NULL NULL NULL NULL $(TARGET)_strip.elf NULL
	-rm -f $(TARGET)_strip.elf

clean:
	-rm -f $(FINAL_TARGET) $(EXTRA_CLEAN) $(OBJS) PARAM.SFO EBOOT.PBP
