#include "models/dma/dma_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace systolic {

std::optional<DmaConfigIssue> DmaConfig::validate() const {
  auto issue = [](std::string f, std::string e, uint64_t got) {
    return DmaConfigIssue{std::move(f), std::move(e), std::to_string(got)};
  };
  if (engines < 1) return issue("dma.engines", "an integer >= 1", engines);
  if (max_outstanding < 1 || max_outstanding > (1u << 20))
    return issue("dma.max_outstanding", "an integer in [1, 1048576]", max_outstanding);
  return std::nullopt;
}

DmaCore::DmaCore(HbmCore& hbm, std::vector<Scratchpad*> scratchpads, const DmaConfig& config)
    : hbm_(hbm), scratchpads_(std::move(scratchpads)), config_(config) {
  if (auto bad = config_.validate()) throw std::invalid_argument(bad->message());
  const HbmConfig& h = hbm_.config();
  request_bytes_ = config_.request_bytes ? config_.request_bytes : h.chunk_bytes;
  if (request_bytes_ % h.burst_bytes() != 0)
    throw std::invalid_argument(fmt::format(
        "dma.request_bytes: expected a multiple of the HBM burst ({} B), got {}", h.burst_bytes(),
        request_bytes_));
  request_pow2_ = (request_bytes_ & (request_bytes_ - 1)) == 0;
  window_.assign(config_.max_outstanding, 0);
}

Scratchpad* DmaCore::scratchpad(const DmaEndpoint& e, const char* side, const DmaDescriptor& d,
                                std::string& error) const {
  if (!error.empty()) return nullptr;
  const uint64_t extent = d.extent_bytes(e);
  if (e.is_hbm()) {
    const uint64_t cap = hbm_.config().capacity_bytes;
    if (e.base > cap || extent > cap - e.base)
      error = fmt::format("dma descriptor: {} [{:#x}, {:#x}) is past the HBM capacity of {}", side,
                          e.base, e.base + extent, format_bytes(cap));
    return nullptr;
  }
  if (e.space < 0 || static_cast<size_t>(e.space) >= scratchpads_.size() || !scratchpads_[e.space]) {
    error = fmt::format("dma descriptor: {} names scratchpad {}, but the engine has {}", side,
                        e.space, scratchpads_.size());
    return nullptr;
  }
  Scratchpad* s = scratchpads_[e.space];
  if (!s->contains(e.base, extent))
    error = fmt::format("dma descriptor: {} [{}, {}) is past the end of {} ({})", side, e.base,
                        e.base + extent, s->name(), format_bytes(s->capacity_bytes()));
  return s;
}

std::optional<std::string> DmaCore::check(const DmaDescriptor& d) const {
  std::string error;
  if (d.element_bytes == 0) error = "dma descriptor: element_bytes must be >= 1";
  scratchpad(d.src, "source", d, error);
  scratchpad(d.dst, "destination", d, error);
  if (error.empty()) return std::nullopt;
  return error;
}

void DmaCore::start(const DmaDescriptor& d, uint64_t now_ps) {
  if (!issued_all()) throw std::logic_error("dma: start() before the previous descriptor was issued");
  if (auto bad = check(d)) throw std::invalid_argument(*bad);
  std::string none;
  src_sram_ = scratchpad(d.src, "source", d, none);
  dst_sram_ = scratchpad(d.dst, "destination", d, none);
  legs_[0] = Leg{};
  legs_[1] = Leg{};
  legs_left_ = 0;
  const bool empty = d.total_bytes() == 0;
  if (!empty) {
    if (d.src.is_hbm()) legs_[0] = Leg{RunCursor(d, d.src), 0, 0, false, true, true};
    if (d.dst.is_hbm()) legs_[1] = Leg{RunCursor(d, d.dst), 0, 0, true, true, true};
    if (!d.src.is_hbm() && !d.dst.is_hbm())  // SRAM -> SRAM: pieces of the source runs
      legs_[0] = Leg{RunCursor(d, d.src), 0, 0, false, false, true};
    legs_left_ = legs_[0].active + legs_[1].active;
  }
  start_ = issue_ = completion_ = now_ps;
  counted_ = false;
  ++stats_.descriptors;
  stats_.bytes += d.total_bytes();
}

uint64_t DmaCore::next_issue_ps() const {
  return std::max(issue_, window_[slot_]);
}

bool DmaCore::issue_until(uint64_t horizon_ps) {
  while (legs_left_ > 0 && next_issue_ps() <= horizon_ps) issue_one();
  if (legs_left_ == 0 && !counted_) {
    stats_.busy_ps += completion_ - start_;
    counted_ = true;
  }
  return legs_left_ == 0;
}

void DmaCore::issue_one() {
  // Both HBM sides advance together: take the leg that has issued fewer bytes.
  Leg& leg = !legs_[0].active                               ? legs_[1]
             : !legs_[1].active                             ? legs_[0]
             : legs_[1].issued < legs_[0].issued ? legs_[1] : legs_[0];
  const DmaRun run = leg.cursor.current();
  const uint64_t a = run.address + leg.offset;
  const uint64_t boundary = request_pow2_ ? (a | (request_bytes_ - 1)) + 1
                                          : (a / request_bytes_ + 1) * request_bytes_;
  const uint64_t n = std::min(run.bytes - leg.offset, boundary - a);
  leg.offset += n;
  leg.issued += n;
  if (leg.offset == run.bytes) {
    leg.offset = 0;
    leg.cursor.advance();
    if (leg.cursor.done()) {
      leg.active = false;
      --legs_left_;
    }
  }

  const uint64_t t = next_issue_ps();
  uint64_t done;
  if (!leg.hbm) {  // SRAM -> SRAM
    done = dst_sram_->access(true, n, src_sram_->access(false, n, t));
    stats_.sram_bytes_read += n;
    stats_.sram_bytes_written += n;
  } else if (!leg.write) {  // HBM read, then the destination SRAM (if any) is written
    done = hbm_.access(a, n, false, t);
    stats_.hbm_bytes_read += n;
    if (dst_sram_) {
      done = dst_sram_->access(true, n, done);
      stats_.sram_bytes_written += n;
    }
  } else {  // the source SRAM (if any) is read, then HBM written
    uint64_t ready = t;
    if (src_sram_) {
      ready = src_sram_->access(false, n, t);
      stats_.sram_bytes_read += n;
    }
    done = hbm_.access(a, n, true, ready);
    stats_.hbm_bytes_written += n;
  }
  issue_ = t;
  window_[slot_] = done;
  slot_ = slot_ + 1 == window_.size() ? 0 : slot_ + 1;
  completion_ = std::max(completion_, done);
  ++stats_.requests;
}

uint64_t DmaCore::run(const DmaDescriptor& d, uint64_t now_ps) {
  start(d, now_ps);
  issue_until(UINT64_MAX);
  return completion_;
}

}  // namespace systolic
