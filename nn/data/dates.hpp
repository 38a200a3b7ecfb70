// Date normalization (the classic attention demo): many human-written formats -> ISO 8601.
//
// Slashed and dashed numeric dates use the US order, month first: "tue 03/04/97" is
// Tuesday 4 March 1997. Two-digit years pivot at 50: 50..99 -> 1950..1999, 00..49 -> 2000..2049,
// which is exactly the default range, so every source string names one date.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "nn/data/pair.hpp"

namespace attnlab::nn::data {

struct Date {
  int year = 1970, month = 1, day = 1;
};
inline bool operator==(const Date& a, const Date& b) { return a.year == b.year && a.month == b.month && a.day == b.day; }

bool is_leap_year(int year);
int days_in_month(int year, int month);
bool is_valid_date(const Date& d);
// Days since 1970-01-01 in the proleptic Gregorian calendar, and back.
long days_from_civil(const Date& d);
Date civil_from_days(long days);
// 0 = Monday ... 6 = Sunday.
int weekday(const Date& d);
const char* weekday_name(int wd);  // "Monday"
const char* month_name(int month);  // "March"

std::string iso_date(const Date& d);  // "1997-03-03"

// The formats, each named by how it writes Monday 3 March 1997.
const std::vector<std::string>& date_format_names();
std::size_t num_date_formats();
std::string format_date(const Date& d, std::size_t format);

// Uniform over the days of [first_year-01-01, last_year-12-31].
Date random_date(Generator& gen, int first_year = 1950, int last_year = 2049);

struct DateConfig {
  int first_year = 1950, last_year = 2049;  // two-digit years are only unambiguous within 1950..2049
  std::vector<std::size_t> formats;         // empty = all formats, drawn uniformly
};

// n examples "<some format>" -> "YYYY-MM-DD" with distinct sources. Character-level.
std::vector<Pair> make_dates(std::size_t n, Generator& gen, const DateConfig& cfg = {});

}  // namespace attnlab::nn::data
