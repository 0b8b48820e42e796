#pragma once
// Sums of records kept per part (a replica's serving totals, a work-table row, a layer's engine
// times): the additive members are named once, in the call, and summed member by member.
namespace systolic {

// into.m += from.m for each listed member m.
template <class T, class... Member>
void add_members(T& into, const T& from, Member T::*... members) {
  ((into.*members += from.*members), ...);
}

}  // namespace systolic
